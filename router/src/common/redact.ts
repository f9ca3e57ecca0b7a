/**
 * Secret redaction for anything the router or the container writes about a command line or a configured value
 * (logs, configuration errors). One home for the rules, so the engine's argv, `sh -c` scripts and error messages
 * are redacted alike. Values are replaced by `***`; names stay, so an operator still sees what was set.
 */
export const REDACTED = '***';

/**
 * A name word that marks a secret: key, token, secret, password, credential (`api-key`, `HF_TOKEN`). Not
 * `tokens` (a count: vLLM's `--max-num-batched-tokens 8192`) nor `tokenizer`.
 */
const SECRET_WORD = '(?:keys?|token|secrets?|passwords?|passwd|credentials?)';

/** A flag naming a secret: `--api-key`, `--hf-token`, `-password` (not `--tokenizer-mode`). */
export const SECRET_FLAG = new RegExp(`^--?(?:[a-z0-9]+-)*${SECRET_WORD}(?:-[a-z0-9]+)*$`, 'i');

const VALUE = `('[^']*'|"[^"]*"|[^\\s'"]+)`;

const RULES: ReadonlyArray<readonly [RegExp, string]> = [
  // scheme://user:password@host → scheme://***@host
  [/([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"]+@/gi, `$1${REDACTED}@`],
  // scheme://host/path?query → scheme://host/path?*** (signed URLs, tokens in query strings)
  [/([a-z][a-z0-9+.-]*:\/\/[^\s?#'"]*)\?[^\s#'"]+/gi, `$1?${REDACTED}`],
  // --api-key x, --api-key=x, inside a longer text such as an `sh -c '…'` script
  [
    new RegExp(`(^|[\\s'"])(--?(?:[a-z0-9]+-)*${SECRET_WORD}(?:-[a-z0-9]+)*)(=|\\s+)(?!-)${VALUE}`, 'gi'),
    `$1$2$3${REDACTED}`,
  ],
  // HF_TOKEN=x, AWS_SECRET_ACCESS_KEY=x, api_key=x (environment assignments, .env lines)
  [new RegExp(`(^|[\\s'";&|])((?:[a-z0-9]+_)*${SECRET_WORD}(?:_[a-z0-9]+)*)=${VALUE}`, 'gi'), `$1$2=${REDACTED}`],
];

/** `text` with every secret-shaped value replaced by `***`. */
export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}

/** An argv for logs: a secret flag's next word redacted (`--api-key x`), and every word through redactText. */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (SECRET_FLAG.test(word) && i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
      out.push(word, REDACTED);
      i++;
    } else {
      out.push(redactText(word));
    }
  }
  return out;
}
