export { capConnections, type CappedConnections, type Preemption } from './cap-connections.js';
