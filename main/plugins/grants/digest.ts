import { createHash } from 'node:crypto';

/** What a grant is pinned to: `sha256:<64 hex>` of the component's bytes (its `plugin.wasm`). */
export function componentDigest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** `sha256:` and 64 lowercase hex digits. */
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** `sha256:ab12cd34…`: enough to tell two builds apart on a line a person reads. */
export function shortDigest(digest: string): string {
  return digest.length > 19 ? `${digest.slice(0, 19)}…` : digest;
}
