import { REPORT_SCHEMA, REPORT_SCHEMA_VERSION, type BenchmarkReport } from './report-model';

/** The report as pretty JSON (schema id and version first). Unknown values are null, never NaN. */
export function renderJson(report: BenchmarkReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

export class ReportSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportSchemaError';
  }
}

/**
 * Read a report back from its JSON (to re-render it or compare runs). Checks the schema id, the version and
 * the top-level shape; a report from a newer schema version is refused rather than misread.
 */
export function parseReportJson(text: string): BenchmarkReport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ReportSchemaError(`report is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null) throw new ReportSchemaError('report must be a JSON object');
  const o = value as Record<string, unknown>;
  if (o.schema !== REPORT_SCHEMA)
    throw new ReportSchemaError(`report schema must be '${REPORT_SCHEMA}' (got ${JSON.stringify(o.schema)})`);
  if (o.schemaVersion !== REPORT_SCHEMA_VERSION) {
    throw new ReportSchemaError(
      `report schemaVersion must be ${REPORT_SCHEMA_VERSION} (got ${JSON.stringify(o.schemaVersion)})`,
    );
  }
  for (const key of ['strategies', 'comparisons', 'notes'] as const) {
    if (!Array.isArray(o[key])) throw new ReportSchemaError(`report field '${key}' must be an array`);
  }
  for (const key of ['workload', 'environment'] as const) {
    if (typeof o[key] !== 'object' || o[key] === null)
      throw new ReportSchemaError(`report field '${key}' must be an object`);
  }
  return value as BenchmarkReport;
}
