// Quitting waits for the gateway to stop (before-quit cancelled, stop, quit again), and a second
// launch brings the first one's window forward.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { bringForward, quitAfterStopping, Teardown, type FocusableWindow, type QuitLog } from '../../main/app/lifecycle.js';

/** Electron's quit, as far as the listener sees it: `before-quit` first; unless cancelled, the app is gone. */
class FakeApp extends EventEmitter {
  quits = 0;
  exited = false;
  private done: () => void = () => {};
  /** Settles when a quit is let through. */
  readonly gone = new Promise<void>((resolve) => (this.done = resolve));
  quit(): void {
    this.quits++;
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) {
      this.exited = true;
      this.done();
    }
  }
}

function recorder(): QuitLog & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (line) => lines.push(`info: ${line}`), error: (line) => lines.push(`error: ${line}`) };
}

/** A stop the test finishes by hand. */
function deferredStop(): { stop: () => Promise<void>; calls: () => number; finish: (err?: Error) => void } {
  let calls = 0;
  let settle: ((err?: Error) => void) | undefined;
  const done = new Promise<void>((resolve, reject) => {
    settle = (err) => (err ? reject(err) : resolve());
  });
  return { stop: () => (calls++, done), calls: () => calls, finish: (err) => settle?.(err) };
}

test('the first quit is held until stop() resolves, then the app quits again and is let through', async () => {
  const app = new FakeApp();
  const log = recorder();
  const gate = deferredStop();
  app.on('before-quit', quitAfterStopping(app, gate.stop, log));
  app.quit();
  assert.equal(app.exited, false, 'held while the gateway stops');
  assert.equal(gate.calls(), 1);
  gate.finish();
  await app.gone;
  assert.equal(app.exited, true);
  assert.equal(app.quits, 2, 'quit again once stopped');
  assert.deepEqual(log.lines, ['info: quitting: stopping the gateway', 'info: the gateway stopped; every child is reaped']);
});

test('quits asked for while stopping wait for the same stop; stop runs once', async () => {
  const app = new FakeApp();
  const gate = deferredStop();
  app.on('before-quit', quitAfterStopping(app, gate.stop, recorder()));
  app.quit();
  app.quit();
  app.quit();
  assert.equal(app.exited, false);
  assert.equal(gate.calls(), 1);
  gate.finish();
  await app.gone;
  assert.equal(app.exited, true);
  assert.equal(gate.calls(), 1);
});

test('a stop that fails (or throws at once) is logged, and the app quits all the same', async () => {
  for (const stop of [() => Promise.reject(new Error('socket busy')), (): Promise<void> => { throw new Error('socket busy'); }]) {
    const app = new FakeApp();
    const log = recorder();
    app.on('before-quit', quitAfterStopping(app, stop, log));
    app.quit();
    await app.gone;
    assert.equal(app.exited, true);
    assert.deepEqual(log.lines, ['info: quitting: stopping the gateway', 'error: stopping the gateway failed: socket busy']);
  }
});

class FakeWindow implements FocusableWindow {
  calls: string[] = [];
  constructor(private readonly minimized: boolean, private readonly destroyed = false) {}
  isDestroyed(): boolean {
    return this.destroyed;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  restore(): void {
    this.calls.push('restore');
  }
  show(): void {
    this.calls.push('show');
  }
  focus(): void {
    this.calls.push('focus');
  }
}

test('a second launch brings the window forward (restored if minimised); no window, or a destroyed one, is left alone', () => {
  const minimised = new FakeWindow(true);
  bringForward(minimised);
  assert.deepEqual(minimised.calls, ['restore', 'show', 'focus']);
  const open = new FakeWindow(false);
  bringForward(open);
  assert.deepEqual(open.calls, ['show', 'focus']);
  const gone = new FakeWindow(true, true);
  bringForward(gone);
  assert.deepEqual(gone.calls, []);
  bringForward(undefined);
});

test('the teardown undoes in reverse order, waits for each step, goes on past a failing one, and runs each step once', async () => {
  const log = recorder();
  const teardown = new Teardown(log);
  const done: string[] = [];
  teardown.add('close the plugins', () => done.push('plugins'));
  teardown.add('stop the gateway', async () => {
    await Promise.resolve();
    done.push('gateway');
  });
  teardown.add('unbind the bridge', () => {
    throw new Error('already unbound');
  });
  teardown.add('close the bridge', () => Promise.reject(new Error('closed twice')));
  await teardown.run();
  assert.deepEqual(done, ['gateway', 'plugins']);
  assert.deepEqual(log.lines, ['error: close the bridge failed: closed twice', 'error: unbind the bridge failed: already unbound']);
  await teardown.run();
  assert.deepEqual(done, ['gateway', 'plugins'], 'nothing runs twice');
});

test('a step added once the teardown has begun (a quit while starting) is undone too', async () => {
  const teardown = new Teardown(recorder());
  const done: string[] = [];
  let release: () => void = () => {};
  const slow = new Promise<void>((resolve) => (release = resolve));
  teardown.add('close the plugins', () => slow.then(() => done.push('plugins')));
  const first = teardown.run();
  teardown.add('stop the gateway', () => done.push('gateway'));
  release();
  await first;
  await teardown.run();
  assert.deepEqual(done, ['plugins', 'gateway']);
  teardown.add('close the bridge', () => done.push('bridge'));
  await teardown.run();
  assert.deepEqual(done, ['plugins', 'gateway', 'bridge']);
});
