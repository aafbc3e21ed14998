// The preload: a thin, allow-listed bridge exposed as `window.chatty`. It runs sandboxed, where
// only 'electron' can be required, so the channel names are written here; they are checked
// against main/app/bridge/contract.ts by the compiler (the type-only import below is erased, and
// `satisfies` fails the build if a name differs or is missing) and by the browser tests. No
// logic lives here: main validates every payload, and the renderer never sees ipcRenderer.
import electron = require('electron');
import type { IpcRendererEvent } from 'electron';
import type { ChattyBridge, EventChannels, InvokeChannels } from '../main/app/bridge/contract.js' with { 'resolution-mode': 'import' };

const { contextBridge, ipcRenderer } = electron;

const INVOKE = {
  gatewayInfo: 'chatty:gateway-info',
  listAgents: 'chatty:list-agents',
  listModules: 'chatty:list-modules',
  snapshot: 'chatty:snapshot',
  startTask: 'chatty:start-task',
  cancelTask: 'chatty:cancel-task',
  answerApproval: 'chatty:answer-approval',
  answerQuestion: 'chatty:answer-question',
  answerGrant: 'chatty:answer-grant',
  postMessage: 'chatty:post-message',
  listApprovalRules: 'chatty:list-approval-rules',
  revokeApprovalRule: 'chatty:revoke-approval-rule',
} as const satisfies InvokeChannels;

const EVENTS = {
  edgeRow: 'chatty:edge-row',
  task: 'chatty:task',
  approval: 'chatty:approval',
  question: 'chatty:question',
  grant: 'chatty:grant',
  withdrawn: 'chatty:withdrawn',
  message: 'chatty:message',
  approvalDecision: 'chatty:approval-decision',
  modules: 'chatty:modules',
  refused: 'chatty:refused',
} as const satisfies EventChannels;

// The reverse check: every name main has is here (`satisfies` above only checks the ones written).
const everyInvoke: Record<keyof InvokeChannels, true> = { gatewayInfo: true, listAgents: true, listModules: true, snapshot: true, startTask: true, cancelTask: true, answerApproval: true, answerQuestion: true, answerGrant: true, postMessage: true, listApprovalRules: true, revokeApprovalRule: true };
const everyEvent: Record<keyof EventChannels, true> = { edgeRow: true, task: true, approval: true, question: true, grant: true, withdrawn: true, message: true, approvalDecision: true, modules: true, refused: true };
void everyInvoke;
void everyEvent;

/** A listener gets the payload only, never the IPC event (which carries the sender). */
function subscribe<T>(channel: string, listener: (payload: T) => void): () => void {
  const wrapped = (_event: IpcRendererEvent, payload: T): void => listener(payload);
  ipcRenderer.on(channel, wrapped);
  return () => {
    ipcRenderer.removeListener(channel, wrapped);
  };
}

const api: ChattyBridge = {
  gatewayInfo: () => ipcRenderer.invoke(INVOKE.gatewayInfo),
  listAgents: () => ipcRenderer.invoke(INVOKE.listAgents),
  listModules: () => ipcRenderer.invoke(INVOKE.listModules),
  snapshot: () => ipcRenderer.invoke(INVOKE.snapshot),
  startTask: (request) => ipcRenderer.invoke(INVOKE.startTask, request),
  cancelTask: (request) => ipcRenderer.invoke(INVOKE.cancelTask, request),
  answerApproval: (request) => ipcRenderer.invoke(INVOKE.answerApproval, request),
  answerQuestion: (request) => ipcRenderer.invoke(INVOKE.answerQuestion, request),
  answerGrant: (request) => ipcRenderer.invoke(INVOKE.answerGrant, request),
  postMessage: (request) => ipcRenderer.invoke(INVOKE.postMessage, request),
  listApprovalRules: () => ipcRenderer.invoke(INVOKE.listApprovalRules),
  revokeApprovalRule: (request) => ipcRenderer.invoke(INVOKE.revokeApprovalRule, request),
  onEdgeRow: (listener) => subscribe(EVENTS.edgeRow, listener),
  onTask: (listener) => subscribe(EVENTS.task, listener),
  onApproval: (listener) => subscribe(EVENTS.approval, listener),
  onQuestion: (listener) => subscribe(EVENTS.question, listener),
  onGrant: (listener) => subscribe(EVENTS.grant, listener),
  onWithdrawn: (listener) => subscribe(EVENTS.withdrawn, listener),
  onMessage: (listener) => subscribe(EVENTS.message, listener),
  onApprovalDecision: (listener) => subscribe(EVENTS.approvalDecision, listener),
  onModules: (listener) => subscribe(EVENTS.modules, listener),
  onRefused: (listener) => subscribe(EVENTS.refused, listener),
};

contextBridge.exposeInMainWorld('chatty', api);
