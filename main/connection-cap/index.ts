export { capConnections, type Preemption } from './cap-connections.js';
