import { fstatSync, linkSync, mkdirSync, readFileSync, readlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readRegularFileSync } from '../../owner-only/regular-file.js';

/**
 * The name of the hidden file an approved write is made in (`writeReplacing`), and how a later write
 * tells one a dead writer left (SIGKILL, the out-of-memory killer, the machine going down) from any
 * other file. The name says who made it: the writing process (its pid, its start time in clock ticks
 * since boot, the boot, its pid and time namespaces), sealed with a key of this user's kept outside every
 * workspace (`$XDG_STATE_HOME/chatty/write-key`, else `~/.local/state/chatty/write-key`, 0600):
 *
 *   .<base>.chatty-write-<12 hex>.<pid>.<start>.<boot: 16 hex>.<pid namespace>.<time namespace>.<seal: 16 hex>
 *
 * (`.chatty-write-…` alone for a base over 100 bytes). A name a branch commits or a worker makes
 * without the key is not sealed, so it is never taken for one; where the key or `/proc` cannot be
 * had the name is `.<base>.chatty-write-<12 hex>`, as before, never removed by anyone.
 */
const TAG = 'chatty-write-';
const SEALED = /\.chatty-write-[0-9a-f]{12}\.(\d{1,10})\.(\d{1,20})\.([0-9a-f]{16})\.(\d{1,20})\.(\d{1,20})\.([0-9a-f]{16})$/;

/**
 * Whether `name` bears the mark of a write's hidden file (`.chatty-write-`): the sweep looks only at
 * such names, and a write is never let make a file of one (`resolveInWorkspace`).
 */
export function looksLikeTemporary(name: string): boolean {
  return name.includes(`.${TAG}`);
}

/**
 * A writing process, as a name says it: it is that process while that pid has that start time in that
 * boot, read in that pid namespace's `/proc` and in that time namespace (`/proc/<pid>/stat`'s start time
 * is shifted by the reader's time namespace's boot-time offset).
 */
export interface Writer {
  pid: number;
  start: string;
  boot: string;
  pidNamespace: string;
  timeNamespace: string;
}

let self: Writer | null | undefined;
let key: Buffer | null | undefined;

/**
 * This process as a writer, or null where `/proc` cannot say: macOS, or a `/proc` that is not this
 * process's pid namespace's (`unshare --pid` without a `/proc` of its own: `/proc/<pid>` there is
 * another namespace's process, so a live writer of this namespace would be judged gone).
 */
export function thisWriter(): Writer | null {
  if (self !== undefined) return self;
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').replace(/[^0-9a-f]/g, '').slice(0, 16);
    // One pid, this process's own: more are the pids of the namespaces above down to this one's.
    const nsPids = /^NSpid:[ \t]*(.*)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]?.trim().split(/\s+/);
    const ownProc = nsPids?.length === 1 && nsPids[0] === String(process.pid);
    const pidNamespace = namespaceOf('pid');
    const timeNamespace = namespaceOf('time');
    const start = startOf('self');
    self =
      ownProc && boot.length === 16 && pidNamespace !== undefined && timeNamespace !== undefined && start !== undefined
        ? { pid: process.pid, start, boot, pidNamespace, timeNamespace }
        : null;
  } catch {
    self = null;
  }
  return self;
}

/** This process's `kind` namespace (its inode); '0' for a time namespace where the kernel has none (before Linux 5.6: one clock for all). */
function namespaceOf(kind: 'pid' | 'time'): string | undefined {
  try {
    return /^[a-z]+:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/ns/${kind}`))?.[1];
  } catch (err) {
    if (kind === 'time' && (err as NodeJS.ErrnoException).code === 'ENOENT') return '0';
    throw err;
  }
}

/** The start time of process `pid` (`/proc/<pid>/stat`, field 22), undefined when there is none. */
function startOf(pid: number | 'self'): string | undefined {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold anything: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  return start !== undefined && /^\d+$/.test(start) ? start : undefined;
}

/** This user's key for sealing names, made once (owner-only), or null when it cannot be had. */
function writeKey(): Buffer | null {
  if (key !== undefined) return key;
  key = null;
  const state = process.env.XDG_STATE_HOME?.startsWith('/') ? process.env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  const dir = join(state, 'chatty');
  const file = join(dir, 'write-key');
  try {
    key = readKey(file);
    if (key !== null) return key;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Made whole beside it, then linked in: a second process making it at once keeps the first's.
    const made = join(dir, `.write-key.${process.pid}.${randomBytes(6).toString('hex')}`);
    writeFileSync(made, randomBytes(32), { mode: 0o600, flag: 'wx' });
    try {
      linkSync(made, file);
    } catch {
      // Made by another process meanwhile: that one is the key.
    } finally {
      unlinkSync(made);
    }
    key = readKey(file);
  } catch {
    key = null;
  }
  return key;
}

/** The key in `file` when it is this user's regular file, for nobody else, of 32 bytes (null when it is not there). */
function readKey(file: string): Buffer | null {
  const notOurs = new Error('not this user\'s owner-only key');
  try {
    const read = readRegularFileSync(file, { maxBytes: 32 }, (fd) => {
      const st = fstatSync(fd);
      if (st.uid !== process.geteuid?.() || (st.mode & 0o077) !== 0) throw notOurs;
    });
    return read.ok && read.bytes.length === 32 ? read.bytes : null;
  } catch {
    return null;
  }
}

function seal(unsealed: string, withKey: Buffer): string {
  return createHmac('sha256', withKey).update(unsealed).digest('hex').slice(0, 16);
}

/** A fresh name for the file a write of `base` is made in: sealed with this process as its writer where it can be. */
export function temporaryName(base: string): string {
  const prefix = Buffer.byteLength(base) <= 100 ? `.${base}.${TAG}` : `.${TAG}`;
  const name = `${prefix}${randomBytes(6).toString('hex')}`;
  const writer = thisWriter();
  const withKey = writer ? writeKey() : null;
  if (!writer || !withKey) return name;
  const unsealed = `${name}.${writer.pid}.${writer.start}.${writer.boot}.${writer.pidNamespace}.${writer.timeNamespace}`;
  return `${unsealed}.${seal(unsealed, withKey)}`;
}

/** The writer a hidden file's name says made it, when the name is sealed with this user's key; else undefined. */
export function writerNamedBy(name: string): Writer | undefined {
  const m = SEALED.exec(name);
  if (!m) return undefined;
  const withKey = writeKey();
  if (!withKey) return undefined;
  const unsealed = name.slice(0, name.length - 17);
  const claimed = Buffer.from(m[6]!, 'hex');
  if (!timingSafeEqual(claimed, Buffer.from(seal(unsealed, withKey), 'hex'))) return undefined;
  return { pid: Number(m[1]), start: m[2]!, boot: m[3]!, pidNamespace: m[4]!, timeNamespace: m[5]! };
}

/**
 * The name of the file a hidden file's sealed name says it was made for (`.<base>.chatty-write-…`), in
 * the same folder; undefined for a name not of that shape or one made for a name over 100 bytes
 * (`.chatty-write-…`, which does not say). Only its shape is read: `writerNamedBy` checks the seal.
 */
export function baseNamedBy(name: string): string | undefined {
  const m = SEALED.exec(name);
  if (!m || m.index < 2 || !name.startsWith('.')) return undefined;
  const base = name.slice(1, m.index);
  return base === '.' || base === '..' ? undefined : base;
}

/**
 * Whether `writer` is surely gone: its boot is over, or in this boot, pid namespace and time namespace
 * its pid is no process now or one started at another time. A writer of another pid namespace in this
 * boot (a container beside this one) cannot be looked up, and one of another time namespace has its
 * start time read shifted here (a container CRIU restored), so neither is ever judged gone; nor is
 * anything when `/proc` cannot say.
 */
export function isGone(writer: Writer): boolean {
  const me = thisWriter();
  if (!me) return false;
  if (writer.boot !== me.boot) return true;
  if (writer.pidNamespace !== me.pidNamespace || writer.timeNamespace !== me.timeNamespace) return false;
  try {
    return startOf(writer.pid) !== writer.start;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
