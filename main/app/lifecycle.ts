// The app's start and stop decisions, free of Electron (test/app/lifecycle.test.ts): one instance,
// and a quit that waits for the gateway to stop (every child reaped, socket and token removed).

/** The members of Electron's `app` that quitting uses. */
export interface QuittingApp {
  quit(): void;
}

export interface QuitLog {
  info(line: string): void;
  error(line: string): void;
}

/**
 * The `before-quit` listener. Electron does not wait for promises, so the first quit is cancelled
 * (`preventDefault`), `stop()` runs (the gateway: tasks cancelled, every child reaped, the socket
 * and the token removed; then the modules closed), and `app.quit()` is called again, which this
 * listener then lets through. A `stop` that fails is logged and the app quits all the same; quits
 * asked for while stopping wait for the same stop.
 */
export function quitAfterStopping(app: QuittingApp, stop: () => Promise<void>, log: QuitLog): (event: { preventDefault(): void }) => void {
  let state: 'running' | 'stopping' | 'stopped' = 'running';
  return (event) => {
    if (state === 'stopped') return;
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    log.info('quitting: stopping the gateway');
    let stopped: Promise<void>;
    try {
      stopped = stop();
    } catch (err) {
      stopped = Promise.reject(err);
    }
    void stopped
      .then(
        () => log.info('the gateway stopped; every child is reaped'),
        (err: unknown) => log.error(`stopping the gateway failed: ${err instanceof Error ? err.message : String(err)}`),
      )
      .finally(() => {
        state = 'stopped';
        app.quit();
      });
  };
}

/** The members of `BrowserWindow` that bringing it forward uses. */
export interface FocusableWindow {
  isDestroyed(): boolean;
  isMinimized(): boolean;
  restore(): void;
  show(): void;
  focus(): void;
}

/** A second launch (`second-instance`): the running app's window comes forward instead. */
export function bringForward(window: FocusableWindow | undefined): void {
  if (!window || window.isDestroyed()) return;
  if (window.isMinimized()) window.restore();
  window.show();
  window.focus();
}

/** The process signals that quit the app the way closing it does (the gateway stopped first). */
export const QUIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * What the app has set up, undone in reverse order: each step as soon as the thing it undoes
 * exists, so a launch that fails halfway stops what it had started. `run()` takes every step once,
 * goes on past a failing one (logged), and resolves when all are done.
 */
export class Teardown {
  private readonly steps: { what: string; undo: () => unknown }[] = [];
  private running: Promise<void> | undefined;

  constructor(private readonly log: QuitLog) {}

  /**
   * One more thing to undo. Once the teardown has begun (the app quit while it was starting), a
   * step added is undone at once, after the others: what starts late is stopped too.
   */
  add(what: string, undo: () => unknown): void {
    this.steps.push({ what, undo });
    if (this.running) this.running = this.running.then(() => this.drain());
  }

  /** Undoes every step added so far (and any added while it runs); resolves when all are done. */
  run(): Promise<void> {
    this.running ??= this.drain();
    return this.running;
  }

  private async drain(): Promise<void> {
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      try {
        await step.undo();
      } catch (err) {
        this.log.error(`${step.what} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}
