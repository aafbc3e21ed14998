// What the browser tests need to reach inside <chatty-approvals> (an open shadow root): Playwright's
// CSS selectors pierce it on their own (`#popover .deny`); code run in the page does not.
import type { Page } from 'playwright-core';

/** The focused element, followed into shadow roots: its id, else its trimmed text. */
export function deepFocused(page: Page): Promise<string> {
  return page.evaluate(() => {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return active?.id || active?.textContent?.trim() || '';
  });
}

/** Whether the focused element (followed into shadow roots) matches `selector`. */
export function focusMatches(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((s) => {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return active?.matches(s) ?? false;
  }, selector);
}

/** Waits for the popover to be open (of `kind`, when given) and past its guard time. */
export async function armedPopover(page: Page, kind?: 'approval' | 'question' | 'grant'): Promise<void> {
  await page.waitForSelector(`#popover[open]${kind ? `[data-kind="${kind}"]` : ''}[data-armed="true"]`);
}

/** Whether the popover is open. */
export function popoverOpen(page: Page): Promise<boolean> {
  return page.$eval('#popover', (d) => (d as HTMLDialogElement).open);
}

/** Waits until the popover is closed. */
export async function popoverClosed(page: Page): Promise<void> {
  await page.waitForFunction(() => !(document.querySelector('chatty-approvals')?.shadowRoot?.getElementById('popover') as HTMLDialogElement | null)?.open);
}

/** Waits until the "N waiting" button reads `text` (`''` for hidden). */
export async function waitingIs(page: Page, text: string): Promise<void> {
  await page.waitForFunction((t) => {
    const button = document.querySelector('chatty-approvals')?.shadowRoot?.getElementById('waiting');
    return button ? (button.hidden ? '' : button.textContent) === t : false;
  }, text);
}

/** Presses Tab (Shift+Tab with `back`) until the focus matches `selector`; fails if it never does. */
export async function tabTo(page: Page, selector: string, back = false): Promise<void> {
  for (let i = 0; i < 80; i++) {
    if (await focusMatches(page, selector)) return;
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`Tab never reached ${selector}; focus is on ${await deepFocused(page)}`);
}

/** Sets the element's guard time (ms) for the requests shown from now on. */
export async function setGuard(page: Page, ms: number): Promise<void> {
  await page.evaluate((value) => {
    (document.querySelector('chatty-approvals') as unknown as { guardMs: number }).guardMs = value;
  }, ms);
}
