/** The demo window's task cards, as the renderer tests start, find and read them. */
import type { Page } from 'playwright-core';
import { INVOKE_CHANNELS, type Snapshot } from '../../main/app/bridge/contract.js';
import type { AppFixture } from './app-fixture.js';

/** The selector of the card of `taskId`. */
export const card = (taskId: string): string => `article.task[data-task-id="${taskId}"]`;

/** Starts a task from the composer, as a person would, and returns its card's task id. */
export async function startTask(page: Page, agent: string, prompt: string): Promise<string> {
  const before = await page.$$eval('article.task', (cards) => cards.length);
  await page.selectOption('#agent', agent);
  await page.fill('#prompt', prompt);
  await page.click('#start');
  await page.waitForFunction((n) => document.querySelectorAll('article.task').length > n, before);
  return page.$eval('article.task', (c) => c.getAttribute('data-task-id') ?? '');
}

export async function waitForState(page: Page, taskId: string, state: string): Promise<void> {
  await page.waitForSelector(`${card(taskId)}[data-state="${state}"]`);
}

export function outputs(page: Page, taskId: string): Promise<(string | null)[]> {
  return page.$$eval(`${card(taskId)} .output`, (ps) => ps.map((p) => p.textContent));
}

export function timelineText(page: Page, taskId: string): Promise<string> {
  return page.$eval(`${card(taskId)} .timeline`, (el) => el.textContent ?? '');
}

/** The sender of the app's own window, as the host's guard sees it. */
export const trustedFrame = (app: AppFixture): { url: string; isMainFrame: boolean } => ({ url: app.pageUrl, isMainFrame: true });

/** The host's own view (what a reloaded window would get), asked as the trusted window. */
export async function hostSnapshot(app: AppFixture): Promise<Snapshot> {
  return (await app.host.handle(INVOKE_CHANNELS.snapshot, trustedFrame(app), undefined)) as Snapshot;
}
