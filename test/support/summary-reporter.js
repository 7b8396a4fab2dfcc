// Ends every run with one plain line, "jest: N passed, N failed, N skipped", that CI tooling can read.
import { appendFileSync } from 'node:fs';

export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const line = `jest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped`;
    process.stdout.write(`${line}\n`);
    const file = process.env.BINDERY_TEST_SUMMARY;
    if (file) appendFileSync(file, `${results.numPassedTests} ${results.numFailedTests} ${results.numPendingTests}\n`);
  }
}
