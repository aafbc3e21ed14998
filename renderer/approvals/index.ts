/** The approval and question popover: the <chatty-approvals> element. */
export { ChattyApprovals, defineChattyApprovals, GUARD_MS, type Waiting } from './element.js';
export { DANGER_LABEL } from './approval-view.js';
