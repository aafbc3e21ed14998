/** The longest gap between ticks of a `everyMs` timer while it runs: how long the event loop was held. */
export function stallMeter(everyMs = 5): { stop(): number } {
  let last = performance.now();
  let worst = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, everyMs);
  return {
    /** Stops the timer; the worst gap seen, in ms. */
    stop: () => {
      clearInterval(tick);
      return worst;
    },
  };
}
