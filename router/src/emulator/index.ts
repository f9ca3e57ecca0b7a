/** The emulator's public surface: engine model (pure, virtual time), profiles, chat template, HTTP emulator. */
export * from './engine-model';
export * from './engine-profile';
export * from './chat-template';
export * from './output-text';
export * from './step-time';
export * from './engine-driver';
export { startEmulator, startEmulatorFleet, resolveEmulatorOptions } from './emulator-server';
export type { EmulatorOptions, RunningEmulator, RunningEmulatorFleet } from './emulator-server';
