import { baseDialect } from './base.js';

export const postgresDialect = baseDialect;
