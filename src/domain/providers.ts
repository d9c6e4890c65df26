/**
 * The payment providers, named once. The lower-case name is the wire and database value (the
 * callback receipt's provider, the payment's method); the upper-case name is the config NAME
 * (PROVIDER_SECRET_<NAME>, PROVIDER_IPS_<NAME>).
 */
export const CALLBACK_PROVIDERS = ['card', 'cardnet', 'bankapp', 'qr', 'wallet'] as const;
export type CallbackProvider = (typeof CALLBACK_PROVIDERS)[number];

/** The config NAME of a provider: its name in upper case. */
export type ProviderName = Uppercase<CallbackProvider>;
export const providerNameOf = <P extends CallbackProvider>(p: P): Uppercase<P> => p.toUpperCase() as Uppercase<P>;
export const PROVIDER_NAMES: readonly ProviderName[] = CALLBACK_PROVIDERS.map(providerNameOf);
