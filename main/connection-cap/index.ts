export { capConnections } from './cap-connections.js';
