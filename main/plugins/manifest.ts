import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { PluginLoadError, messageOf } from './errors.js';
import { hiddenIn } from './hidden-text.js';
import { MAX_EXECUTION_MS, MAX_MEMORY_MB, MAX_OUTPUT_BYTES, METADATA_TIMEOUT_MS } from './limits.js';
import { AllowEntryError, parseAllowEntry } from './network/allow-entry.js';

/** A control character (a newline, NUL, DEL): never part of a path or a `[config]` key. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** A plain relative path: not absolute, no `..` segment, no `\` or `:` (so no drive letters). */
export function isPlainRelativePath(path: string): boolean {
  if (path.length === 0 || path.startsWith('/') || path.includes('\\') || path.includes(':')) return false;
  // Control characters (a newline, NUL) end up in refusal reasons and log lines: never a path.
  if (CONTROL_CHARACTER.test(path)) return false;
  return !path.split('/').some((segment) => segment === '..');
}

const relativePath = z
  .string()
  .refine(isPlainRelativePath, { message: 'must be a plain relative path (not absolute, no "..", no "\\" or ":", no control characters)' });

/** Module names end up in URLs (`/mcp/{module}`), so they stay URL- and file-name-safe. */
const moduleName = z
  .string()
  .min(1, { message: 'must not be empty' })
  .max(64, { message: 'must be at most 64 characters (it is an address a person reads)' })
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/, { message: 'must be letters, digits, ".", "_" or "-", not starting or ending with "." "_" or "-"' });

/** `[network] allow`: each entry a host, `*.suffix` or IP literal with an optional `:port` (`network/allow-entry.ts`). */
const allowEntry = z.string().superRefine((entry, ctx) => {
  try {
    parseAllowEntry(entry);
  } catch (err) {
    if (!(err instanceof AllowEntryError)) throw err;
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)} ${err.message}` });
  }
});

/** `[config]` keys are plain text: a control character in one is refused, so no key can be one the host reserves (`network/refusal-key.ts`). */
function noControlKeys(config: Record<string, string>, ctx: z.RefinementCtx): void {
  for (const key of Object.keys(config)) {
    if (CONTROL_CHARACTER.test(key)) ctx.addIssue({ code: 'custom', message: `the key ${JSON.stringify(key)} has a control character` });
  }
}

const limit = z.number().int().nonnegative().default(0);

export const ExecutionMode = z.enum(['local', 'remote', 'remote_only']);
export type ExecutionMode = z.infer<typeof ExecutionMode>;

export const ManifestSchema = z
  .strictObject({
    module: z.strictObject({
      name: moduleName,
      // Served to every client (initialize's serverInfo, GET /, the A2A card): semver's characters only.
      version: z.string().min(1, { message: 'must not be empty' }).regex(/^[0-9A-Za-z.+-]{1,64}$/, { message: "must be 1 to 64 of semver's characters (0-9 A-Z a-z . + -), e.g. 1.0.0" }),
      description: z
        .string()
        .superRefine((text, ctx) => {
          const hidden = hiddenIn(text); // a model reads it (GET /, the A2A card): what a person sees is all it says
          if (hidden !== undefined) ctx.addIssue({ code: 'custom', message: hidden });
        })
        .default(''),
      wasm: relativePath.optional(),
      execution_mode: ExecutionMode.default('local'),
    }),
    protocols: z
      .strictObject({ mcp: z.boolean().default(false), a2a: z.boolean().default(false) })
      .default({ mcp: false, a2a: false }),
    resources: z
      .strictObject({ max_memory_mb: limit, max_execution_ms: limit })
      .default({ max_memory_mb: 0, max_execution_ms: 0 }),
    config: z.record(z.string(), z.string()).superRefine(noControlKeys).default({}),
    files: z.strictObject({ root: relativePath }).optional(),
    network: z.strictObject({ allow: z.array(allowEntry) }).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.module.execution_mode === 'local' && m.module.wasm === undefined) {
      ctx.addIssue({ code: 'custom', path: ['module', 'wasm'], message: 'is required unless execution_mode is "remote" or "remote_only"' });
    }
  });

export type Manifest = z.infer<typeof ManifestSchema>;

/** What every module says about itself, local or remote (from its manifest). */
export interface ModuleInfo {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly protocols: { readonly mcp: boolean; readonly a2a: boolean };
  readonly executionMode: ExecutionMode;
  readonly manifest: Manifest;
  /** The module's directory. */
  readonly dir: string;
}

/** What the host enforces for one module, after defaults and clamping. */
export interface ModuleLimits {
  readonly maxMemoryMb: number;
  readonly maxExecutionMs: number;
  readonly maxOutputBytes: number;
  readonly metadataTimeoutMs: number;
}

export interface ParsedManifest {
  readonly manifest: Manifest;
  readonly limits: ModuleLimits;
  /** Clamping and other non-fatal remarks, for the log. */
  readonly warnings: readonly string[];
}

/** Host ceilings; tests and embedders may lower them, never raise them past `MAX_MEMORY_MB` and `MAX_EXECUTION_MS`. */
export interface Ceilings {
  maxMemoryMb: number;
  maxExecutionMs: number;
}

export const DEFAULT_CEILINGS: Readonly<Ceilings> = { maxMemoryMb: MAX_MEMORY_MB, maxExecutionMs: MAX_EXECUTION_MS };

/** Parses and validates `module.toml` text; throws `PluginLoadError` naming the first problems. */
export function parseManifest(text: string, ceilings: Ceilings = DEFAULT_CEILINGS): ParsedManifest {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (err) {
    throw new PluginLoadError(`${tomlErrorPlace(err)}: not valid TOML: ${firstLine(messageOf(err)).replace(/^Invalid TOML document: /, '')}`);
  }
  const result = ManifestSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.slice(0, 5).map(describeIssue);
    throw new PluginLoadError(`module.toml: ${problems.join('; ')}`);
  }
  const manifest = result.data;
  const warnings: string[] = [];
  const clamp = (key: string, requested: number, ceiling: number, unit: string): number => {
    if (requested === 0) return ceiling;
    if (requested > ceiling) {
      warnings.push(`[resources] ${key} = ${requested} is above the host ceiling; clamped to ${ceiling} ${unit}`);
      return ceiling;
    }
    return requested;
  };
  const limits: ModuleLimits = {
    maxMemoryMb: clamp('max_memory_mb', manifest.resources.max_memory_mb, ceilings.maxMemoryMb, 'MiB'),
    maxExecutionMs: clamp('max_execution_ms', manifest.resources.max_execution_ms, ceilings.maxExecutionMs, 'ms'),
    maxOutputBytes: MAX_OUTPUT_BYTES,
    metadataTimeoutMs: METADATA_TIMEOUT_MS,
  };
  return { manifest, limits, warnings };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String);
  const where = path.length === 0 ? '' : path.length === 1 ? `[${path[0]}]` : `[${path[0]}] ${path.slice(1).join('.')}`;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
    return `${where ? `${where}: ` : ''}unknown key${issue.keys.length > 1 ? 's' : ''} ${keys}`;
  }
  return where ? `${where}: ${issue.message}` : issue.message;
}

/** `module.toml:3:14` (line and column from 1, as an editor counts them) when the TOML parser says where. */
function tomlErrorPlace(err: unknown): string {
  const { line, column } = (err ?? {}) as { line?: unknown; column?: unknown };
  return typeof line === 'number' && typeof column === 'number' ? `module.toml:${line}:${column}` : 'module.toml';
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
