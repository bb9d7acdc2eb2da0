export * from './capability-matrix';
export * from './decorators';
export * from './effective-permissions';
export * from './permissions';
export * from './role-matrix';
export * from './scopes';
