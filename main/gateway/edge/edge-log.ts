import { EventEmitter } from 'node:events';
import electronLog from 'electron-log/node.js';
import type { GatewayMiddleware } from '../context.js';

/** One row per request. Never the token, never a body. */
export interface EdgeRow {
  time: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  /** Present on a refusal: why the gateway said no. */
  reason?: string;
}

export type EdgeListener = (row: EdgeRow) => void;

let loggers = 0;

/** How long a row may wait for the rows after it before the batch goes to the file. */
export const EDGE_FLUSH_MS = 20;

/** The part of electron-log's File we read to know its asynchronous writes are done. */
interface PendingWrites {
  hasActiveAsyncWriting: boolean;
  asyncWriteQueue: unknown[];
}

/** The part of electron-log's Node API (shared by every logger in the process) that names the app. */
interface AppNaming {
  dependencies?: { externalApi?: { getAppName(): string; setAppName(name: string): void } };
}

/**
 * electron-log's file transport works out its path variables (the app's name among them) before
 * it asks `resolvePathFn` for the path, and throws when it finds no name: it looks for the nearest
 * package.json from the main module or the working directory, which a CLI started elsewhere does
 * not have. Our path never uses the name, so give it one, unless it already has one of its own
 * (an embedder's, which its own logs rely on).
 */
function nameTheAppIfUnnamed(logger: AppNaming): void {
  const api = logger.dependencies?.externalApi;
  if (!api) return;
  try {
    api.getAppName();
  } catch {
    api.setAppName('chatty-protocol-gateway');
  }
}

/**
 * electron-log batches asynchronous writes but has no flush: wait (a bounded while) until its
 * queue is empty and no write is in progress. Rows are written asynchronously so that logging
 * never blocks a request; only stop() waits for them.
 */
async function drained(file: PendingWrites, limitMs = 2000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while ((file.hasActiveAsyncWriting || file.asyncWriteQueue.length > 0) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * The edge log: a JSON line per request in `edge.log` (through electron-log, whose Node entry
 * runs without Electron) and an event for embedders, so a window can show the traffic live.
 *
 * The event fires at once for every row. The file gets rows in batches: a row's line is queued
 * and the lines queued within `EDGE_FLUSH_MS` go to electron-log as one entry (one `info()` call,
 * lines joined by newlines). electron-log's per-entry pipeline (transforms, formatting, its write
 * queue, and an open/write/close of the file per write) cost tens of microseconds, which per
 * request was the largest cost of the gateway's own path; its transforms are replaced by one
 * that passes the batch's text through. Order is kept, and `stopWriting()` hands
 * over what is queued before it waits for the file.
 */
export class EdgeLog {
  private readonly events = new EventEmitter();
  private file: ReturnType<typeof electronLog.create> | undefined;
  private lines: string[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly flush = (): void => {
    this.flushTimer = undefined;
    this.writeQueued();
  };

  /** Starts writing rows to `path` (mode 0600, appended, rotated by electron-log at 1 MiB). */
  writeTo(path: string): void {
    this.writeQueued(); // rows recorded so far belong to the previous file
    const logger = electronLog.create({ logId: `chatty-edge-${++loggers}` });
    nameTheAppIfUnnamed(logger as unknown as AppNaming);
    logger.transports.console.level = false;
    logger.transports.file.resolvePathFn = () => path;
    logger.transports.file.format = '{text}';
    // A batch is already the file's text: electron-log's default transforms (styles, format, and
    // a JSON round trip plus util.format of the text) cost ~1.3 µs a row, this one nothing.
    logger.transports.file.transforms = [({ data }) => String(data[0])];
    logger.transports.file.sync = false;
    logger.transports.file.writeOptions = { flag: 'a', mode: 0o600, encoding: 'utf8' };
    // Resolve the file now: a problem shows at start, not as rows silently lost later.
    logger.transports.file.getFile();
    this.file = logger;
  }

  /** Stops writing once every queued row has reached the file. */
  async stopWriting(): Promise<void> {
    this.writeQueued();
    const logger = this.file;
    this.file = undefined;
    if (logger) await drained(logger.transports.file.getFile() as unknown as PendingWrites);
  }

  subscribe(listener: EdgeListener): () => void {
    this.events.on('row', listener);
    return () => this.events.off('row', listener);
  }

  record(row: EdgeRow): void {
    if (this.file) {
      this.lines.push(JSON.stringify(row));
      this.flushTimer ??= setTimeout(this.flush, EDGE_FLUSH_MS);
    }
    this.events.emit('row', row);
  }

  /** Hands the queued lines to electron-log as one entry. */
  private writeQueued(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? this.lines[0]! : this.lines.join('\n');
    this.lines = [];
    this.file?.info(text);
  }

  /**
   * The outermost middleware: times the request and records its row once the response is set
   * (a plain function over `next()`'s promise: no async frame of its own on every request).
   */
  middleware(): GatewayMiddleware {
    return (ctx, next) => {
      const started = performance.now();
      const done = (): void => {
        // Node's own fields, not Koa's delegating getters (the same values).
        const row: EdgeRow = {
          time: isoNow(),
          method: ctx.req.method ?? '',
          path: ctx.path,
          status: ctx.res.statusCode,
          durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        };
        if (ctx.state.refusal !== undefined) row.reason = ctx.state.refusal;
        this.record(row);
      };
      return next().then(done, (err: unknown) => {
        done();
        throw err;
      });
    };
  }
}

let isoMs = NaN;
let isoText = '';

/** `new Date().toISOString()`, made once per millisecond (~1 µs each here; rows come several a millisecond under load). */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}
