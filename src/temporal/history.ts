/**
 * Loading a JSON history (the form `temporal workflow show --output json` writes) into a History
 * message for Worker.runReplayHistories.
 *
 * Why not historyFromJSON from @temporalio/common: in this install @temporalio/common, /proto and
 * /worker each carry their own protobufjs 8 (the top level has protobufjs 7), and common's
 * protojson rejects the Type objects of @temporalio/proto's copy ("type must be a Type"). Parsing
 * with the protojson of the copy that @temporalio/proto uses avoids the mismatch.
 */
import path from 'node:path';
import type { temporal } from '@temporalio/proto';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

type FromJson = (type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }) => unknown;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { fromJson } = require(
  require.resolve('protobufjs/ext/protojson', {
    paths: [path.dirname(require.resolve('@temporalio/proto/package.json'))],
  }),
) as {
  fromJson: FromJson;
};
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType(
  'temporal.api.history.v1.History',
);

export function historyFromJson(json: unknown): temporal.api.history.v1.IHistory {
  const h = fromJson(historyType, json, { ignoreUnknownFields: true });
  if (!h) throw new TypeError('invalid history JSON');
  return h as temporal.api.history.v1.IHistory;
}
