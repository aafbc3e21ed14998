import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where `serve` keeps "always" rules by default: `$XDG_CONFIG_HOME/chatty/approvals.json`, else
 * `~/Library/Application Support/chatty/approvals.json` on macOS, else `~/.config/chatty/approvals.json`.
 */
export function defaultApprovalsFile(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && xdg.startsWith('/')) return join(xdg, 'chatty', 'approvals.json');
  const home = env.HOME || homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'chatty', 'approvals.json');
  return join(home, '.config', 'chatty', 'approvals.json');
}
