export * from './router-config';
export * from './config-sources';
