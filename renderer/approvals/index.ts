/** The approval, question and plugin-grant popover: the <chatty-approvals> element. */
export { ChattyApprovals, defineChattyApprovals, GUARD_MS, type Waiting } from './element.js';
export { DANGER_LABEL } from './approval-view.js';
export { CAPABILITY_LABEL } from './grant-view.js';
