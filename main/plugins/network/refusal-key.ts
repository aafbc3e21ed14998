/**
 * The guest's fetch rejects with a bare "NetworkError when attempting to fetch resource" whatever
 * the host answered (StarlingMonkey keeps no `error-code` text). So the host keeps why it refused
 * the latest request, and the wrapper `plugin build` puts around `fetch` reads it once through
 * `chatty:plugin/config.get` under this key — one no manifest can use (it starts with NUL) —
 * and rejects with that reason instead.
 */
export const NETWORK_REFUSAL_KEY = '\u0000chatty:network-refusal';
