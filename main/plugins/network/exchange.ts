/**
 * One outgoing HTTP exchange as the guest's worker hands it to the fetch thread and gets it back:
 * plain data (structured-clonable), no streams. The body comes back whole, under its cap.
 */

export interface NetworkRequest {
  method: string;
  /** Absolute http(s) URL, built from the guest's scheme, authority and path. */
  url: string;
  /** What the guest set, hop-by-hop headers left out. */
  headers: [string, string][];
  body: Uint8Array | null;
}

/**
 * A `wasi:http/types` `error-code`, as jco lifts and lowers a variant. The cases used here:
 * `HTTP-request-denied` (not on the allow-list), `destination-IP-prohibited` (a name resolving to
 * a loopback/private address the list does not name), `HTTP-response-body-size`, `HTTP-request-body-size`,
 * `connection-refused`, `connection-timeout`, `DNS-error`, `internal-error`.
 */
export type ErrorCode = { tag: string; val?: unknown };

export type NetworkAnswer =
  | { ok: true; status: number; headers: [string, string][]; body: Uint8Array }
  | { ok: false; error: ErrorCode; /** Says why, for the guest and the log. */ message: string };
