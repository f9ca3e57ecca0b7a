import * as sagemaker from '@aws-sdk/client-sagemaker';
import { readFileSync } from 'node:fs';

/**
 * Runs an `aws sagemaker …` command line, as docs/validate.md and the tool's finishing commands print it, through
 * the real SDK client against the control-plane fake. The translation is the AWS CLI's own convention: the
 * operation `update-endpoint` is `UpdateEndpoint`, `--endpoint-config-name X` is `EndpointConfigName: X`, a bare
 * boolean flag is `true`, a JSON value is parsed, `--cli-input-json file://F` reads F; `--query` only shapes the
 * CLI's output and is dropped. `wait endpoint-in-service` / `wait endpoint-deleted` poll like the CLI's waiters
 * (success InService / not found; failure Failed). So a documented command that names a wrong operation,
 * parameter or value fails here.
 */
export function shellWords(line: string): string[] {
  const out: string[] = [];
  const re = /'((?:[^']|'\\'')*)'|"([^"]*)"|(\S+)/g;
  for (const m of line.replace(/\s+#.*$/, '').matchAll(re))
    out.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : (m[2] ?? m[3]));
  return out;
}

const pascal = (kebab: string): string => kebab.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());

function value(raw: string): unknown {
  if (raw.startsWith('{') || raw.startsWith('[')) return JSON.parse(raw);
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw;
}

export interface CliResult {
  readonly operation: string;
  readonly output: unknown;
}

export async function runAwsCli(line: string, client: sagemaker.SageMakerClient, maxPolls = 200): Promise<CliResult> {
  const words = shellWords(line);
  if (words[0] !== 'aws' || words[1] !== 'sagemaker') throw new Error(`not an aws sagemaker command: ${line}`);
  const waiter = words[2] === 'wait' ? words[3] : undefined;
  const rest = words.slice(waiter === undefined ? 3 : 4);
  const input: Record<string, unknown> = {};
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i];
    if (!flag.startsWith('--')) throw new Error(`unexpected word ${flag} in ${line}`);
    const next = rest[i + 1];
    const hasValue = next !== undefined && !next.startsWith('--');
    if (flag === '--query') {
      i++;
      continue;
    }
    if (flag === '--cli-input-json') {
      const text = next.startsWith('file://') ? readFileSync(next.slice('file://'.length), 'utf8') : next;
      Object.assign(input, JSON.parse(text));
      i++;
      continue;
    }
    if (flag.startsWith('--no-')) input[pascal(flag.slice(5))] = false;
    else input[pascal(flag.slice(2))] = hasValue ? value(next) : true;
    if (hasValue) i++;
  }
  if (waiter !== undefined) {
    for (let poll = 0; poll < maxPolls; poll++) {
      try {
        const d = await client.send(
          new sagemaker.DescribeEndpointCommand(input as unknown as sagemaker.DescribeEndpointCommandInput),
        );
        if (waiter === 'endpoint-in-service' && d.EndpointStatus === 'InService')
          return { operation: `wait ${waiter}`, output: d };
        if (waiter === 'endpoint-in-service' && d.EndpointStatus === 'Failed')
          throw new Error(`Waiter EndpointInService failed: endpoint is Failed`);
      } catch (err) {
        if (waiter === 'endpoint-deleted' && /could not find/i.test((err as Error).message))
          return { operation: `wait ${waiter}`, output: null };
        if (!/could not find/i.test((err as Error).message)) throw err;
      }
    }
    throw new Error(`Waiter ${waiter} gave up after ${maxPolls} polls`);
  }
  const operation = pascal(words[2]);
  const Command = (
    sagemaker as unknown as Record<
      string,
      new (input: unknown) => sagemaker.$Command<object, object, sagemaker.SageMakerClientResolvedConfig>
    >
  )[`${operation}Command`];
  if (Command === undefined) throw new Error(`aws sagemaker ${words[2]}: no such operation`);
  const output = await client.send(new Command(input) as never);
  return { operation, output };
}
