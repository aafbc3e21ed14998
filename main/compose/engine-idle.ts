// The plugins' idle time as a person types it: `serve --engine-idle-ms <ms>` and the desktop app's
// CHATTY_ENGINE_IDLE_MS. Imported by the command line before anything else loads, so it reaches
// for the one small file that holds the registry's check, not for main/plugins' door (which loads
// the plugin runtime).
import { ENGINE_IDLE_MS_RULE, checkedEngineIdleMs } from '../plugins/handle/idle-timer.js';

/** The environment variable the desktop app reads its plugins' idle time from. */
export const ENGINE_IDLE_MS_ENV = 'CHATTY_ENGINE_IDLE_MS';

/** A typed idle time that is not one; `rule` is the registry's words for what it must be. */
export class EngineIdleMsError extends RangeError {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
    this.name = 'EngineIdleMsError';
  }
}

/**
 * `text` as an idle time in ms: digits only (no sign, point, exponent or `0x`), then the registry's
 * own check of `engineIdleMs` (0 keeps the engine resident). Refused in the registry's words, with
 * `name` (the flag or the variable) in place of the option's and the text as typed.
 */
export function parseEngineIdleMs(text: string, name: string): number {
  try {
    return checkedEngineIdleMs(/^\d+$/.test(text) ? Number(text) : Number.NaN);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new EngineIdleMsError(ENGINE_IDLE_MS_RULE, `${name} must be ${ENGINE_IDLE_MS_RULE}, not ${JSON.stringify(text)}`);
  }
}

/** The app's idle time: CHATTY_ENGINE_IDLE_MS when set and not empty (checked), else the registry's default. */
export function engineIdleMsFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const text = env[ENGINE_IDLE_MS_ENV];
  return text === undefined || text === '' ? undefined : parseEngineIdleMs(text, ENGINE_IDLE_MS_ENV);
}
