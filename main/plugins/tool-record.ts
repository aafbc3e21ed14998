import { createHash } from 'node:crypto';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { MIB } from './limits.js';
import type { ToolDefinition } from './worker/protocol.js';

/** Bumped when the record's layout changes (an older record is then ignored and made again). */
const RECORD_FORMAT = 1;
/** A record larger than this is not read (a guest's list-tools answer is capped far below it). */
const MAX_RECORD_BYTES = 16 * MIB;

const RecordSchema = z
  .object({
    format: z.literal(RECORD_FORMAT),
    /** SHA-256 of the context the tools were listed in (see `ToolRecord`). */
    context: z.string().regex(/^[0-9a-f]{64}$/),
    tools: z.array(z.object({ name: z.string(), description: z.string(), parametersSchema: z.string() }).strict()),
  })
  .strict();

/**
 * What a load learnt by running a component's `list-tools`, kept on disk beside its transpile
 * cache entry (`tools-<context>.json`): so `tools/list` is answered without the engine, and a
 * later load of the same bytes in the same context (in this process or the next) need not start
 * it either. `context` is everything the guest was given besides its bytes (its module's name,
 * config, grants, files root, network, limits) as one string: a change to any of them makes a new
 * record, and another module of the same bytes has its own, unless the list was made without the
 * guest ever being told its name (then the name is left out, `ModuleHandle`). A record that
 * is missing, unreadable or malformed reads as none; writing one never fails a load.
 */
export class ToolRecord {
  constructor(private readonly entryDir: string) {}

  async read(context: string): Promise<ToolDefinition[] | undefined> {
    const digest = contextDigest(context);
    let text: string;
    try {
      const file = await open(this.pathFor(digest), 'r');
      try {
        const { size } = await file.stat();
        if (size > MAX_RECORD_BYTES) return undefined;
        text = await file.readFile('utf8');
      } finally {
        await file.close();
      }
    } catch {
      return undefined;
    }
    let parsed: z.infer<typeof RecordSchema>;
    try {
      parsed = RecordSchema.parse(JSON.parse(text));
    } catch {
      return undefined;
    }
    return parsed.context === digest ? parsed.tools : undefined;
  }

  /** Writes the record (atomically: a reader sees the old one, the new one or none). */
  async write(context: string, tools: readonly ToolDefinition[]): Promise<void> {
    const digest = contextDigest(context);
    const record: z.infer<typeof RecordSchema> = {
      format: RECORD_FORMAT,
      context: digest,
      tools: tools.map(({ name, description, parametersSchema }) => ({ name, description, parametersSchema })),
    };
    const path = this.pathFor(digest);
    const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`;
    try {
      await writeFile(tmp, JSON.stringify(record), { mode: 0o600 }); // owner-only, as its cache entry (component-cache.ts)
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  private pathFor(digest: string): string {
    return join(this.entryDir, `tools-${digest.slice(0, 32)}.json`);
  }
}

function contextDigest(context: string): string {
  return createHash('sha256').update(context).digest('hex');
}
