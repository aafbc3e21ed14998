/** `serve --watch`: a modules directory kept in step with the registry while the gateway serves. */
export { ModulesWatcher, watchModules, WATCH_DEBOUNCE_MS, type ModulesWatcherOptions } from './modules-watcher.js';
