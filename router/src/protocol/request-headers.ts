/** A request's headers as Node gives them (lower-case names); parse-request.ts and request-priority.ts read them. */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;
