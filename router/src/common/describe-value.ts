import { redactText } from './redact';

/** A value as an error message shows it, secret-shaped parts redacted (a backend URL with a password, a token flag). */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(redactText(value));
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  try {
    const json = redactText(JSON.stringify(value));
    return json.length > 80 ? `${json.slice(0, 77)}...` : json;
  } catch {
    return typeof value;
  }
}
