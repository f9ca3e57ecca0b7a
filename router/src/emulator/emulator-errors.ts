/**
 * Errors the emulator answers with, shaped like vLLM's OpenAI server: `{"error":{"message","type","param",
 * "code"}}` with a vLLM-style type name and the HTTP status as `code`.
 */
const TYPES: Readonly<Record<number, string>> = {
  400: 'BadRequestError',
  404: 'NotFoundError',
  405: 'MethodNotAllowedError',
  413: 'BadRequestError',
  500: 'InternalServerError',
  503: 'ServiceUnavailableError',
};

export class EmulatorHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The request field at fault, when there is one. */
    readonly param: string | null = null,
    /** Extra response headers (e.g. Allow for 405). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'EmulatorHttpError';
  }

  get type(): string {
    return TYPES[this.status] ?? (this.status >= 500 ? 'InternalServerError' : 'BadRequestError');
  }

  body(): { error: { message: string; type: string; param: string | null; code: number } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.status } };
  }
}

export function badRequest(message: string, param: string | null = null): EmulatorHttpError {
  return new EmulatorHttpError(400, message, param);
}
