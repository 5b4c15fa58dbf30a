export * from './users.js';
export * from './api-keys.js';
export * from './audit.js';
export * from './login-failures.js';
