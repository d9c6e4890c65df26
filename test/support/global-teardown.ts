export default async function globalTeardown(): Promise<void> {
  const stops = (globalThis as { __talatStops?: (() => Promise<void>)[] }).__talatStops ?? [];
  for (const stop of stops.reverse()) await stop();
}
