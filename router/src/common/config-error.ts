/**
 * The one error type for invalid configuration, wherever it was typed: command-line flags, environment
 * variables, config files, policy specs. It carries every problem found (the user fixes them in one go), each
 * line naming the flag, variable or key and the allowed range; the CLI prints the message and exits 1.
 * `subject` heads a multi-line message ("invalid router configuration"); without it a single problem is the
 * whole message.
 */
export class ConfigError extends Error {
  constructor(
    readonly problems: readonly string[],
    readonly subject?: string,
  ) {
    super(
      subject === undefined && problems.length === 1
        ? problems[0]
        : `${subject ?? 'invalid flags'}:\n  ${problems.join('\n  ')}`,
    );
    this.name = 'ConfigError';
  }
}
