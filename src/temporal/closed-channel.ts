/**
 * The client's gRPC interceptors: Temporal's retries, then a guard for a closed channel. A call
 * that Temporal's interceptor retries on a timer (UNAVAILABLE while the frontend is unreachable)
 * otherwise meets a closed connection with an exception thrown from that timer, which nothing can
 * catch: the process crashed on shutdown. The guard ends such a retry with CANCELLED instead.
 */
import * as grpc from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

/** A call that ends at once with CANCELLED and `details`, without reaching the channel. */
function endedCall(details: string): grpc.InterceptingCall {
  const noop = (): void => undefined;
  return new grpc.InterceptingCall({
    start(_metadata, listener) {
      setImmediate(() =>
        listener?.onReceiveStatus?.({ code: grpc.status.CANCELLED, details, metadata: new grpc.Metadata() }),
      );
    },
    sendMessageWithContext: noop,
    sendMessage: noop,
    startRead: noop,
    halfClose: noop,
    cancelWithStatus: noop,
    getPeer: () => '',
    getAuthContext: () => null,
  });
}

export const closedChannelGuard: grpc.Interceptor = (options, nextCall) => {
  try {
    return new grpc.InterceptingCall(nextCall(options));
  } catch (e) {
    return endedCall((e as Error).message);
  }
};

/** What every Talat client connection is given as `interceptors`. */
export function clientInterceptors(): grpc.Interceptor[] {
  return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), closedChannelGuard];
}
