import { z } from 'zod';
import { MAX_OPAQUE_BYTES } from './sizes.js';

/**
 * JSON text the broker carries and never reads: a captured conversation, a handoff, evidence.
 * The codec slices it out of the line (it is syntax-checked, never turned into objects) and
 * splices it back verbatim when the frame is encoded again.
 */
export class RawJson {
  readonly byteLength: number;
  constructor(readonly text: string) {
    this.byteLength = Buffer.byteLength(text, 'utf8');
  }
}

/** An opaque value: a `RawJson` of at most `MAX_OPAQUE_BYTES`. */
export const OpaqueJson = z
  .instanceof(RawJson)
  .refine((raw) => raw.byteLength <= MAX_OPAQUE_BYTES, { message: `opaque value over ${MAX_OPAQUE_BYTES} bytes` })
  .meta({ description: 'opaque JSON, carried verbatim and never read by the broker (at most 32 MiB)' });

/** The keys of TaskMetadata whose values are opaque; the codec looks for them at `result.metadata.<key>`. */
export const OPAQUE_METADATA_KEYS: readonly string[] = ['conversation', 'handoff', 'evidence'];
