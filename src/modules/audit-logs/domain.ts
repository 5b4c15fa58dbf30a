/** The audit log's rules other modules use: whether a stored chain of entries is intact (compliance reports it). */
export { isIntact } from './chain.js';
