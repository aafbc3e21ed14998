// The scan's verdict: no HIGH, no MEDIUM but PRELOAD_JS_CHECK, every LOW explained, every file parsed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explainedLowFindings, judge, type Finding, type Severity } from './electron-scan/policy.js';

const finding = (id: string, severity: Severity): Finding => ({ id, severity, confidence: 'FIRM', file: 'main/app/x.ts', line: 3, column: 4, description: 'd', manualReview: false });

test('a HIGH finding fails the scan', () => {
  const verdict = judge([finding('CONTEXT_ISOLATION_JS_CHECK', 'HIGH')], [], new Set());
  assert.deepEqual(verdict.failures, ['HIGH CONTEXT_ISOLATION_JS_CHECK at main/app/x.ts:3:4: d']);
});

test('a MEDIUM finding fails it, except the review item every preload gets', () => {
  assert.equal(judge([finding('SANDBOX_JS_CHECK', 'MEDIUM')], [], new Set()).failures.length, 1);
  const preload = judge([finding('PRELOAD_JS_CHECK', 'MEDIUM')], [], new Set());
  assert.deepEqual(preload.failures, []);
  assert.equal(preload.notes.length, 1);
});

test('a LOW finding passes only when docs/security.md explains it', () => {
  assert.equal(judge([finding('CSP_GLOBAL_CHECK', 'LOW')], [], new Set()).failures.length, 1);
  assert.match(judge([finding('CSP_GLOBAL_CHECK', 'LOW')], [], new Set()).failures[0] ?? '', /explain CSP_GLOBAL_CHECK under "LOW findings" in docs\/security\.md/);
  assert.deepEqual(judge([finding('CSP_GLOBAL_CHECK', 'LOW')], [], new Set(['CSP_GLOBAL_CHECK'])).failures, []);
  assert.deepEqual(judge([finding('SOMETHING_JS_CHECK', 'INFORMATIONAL')], [], new Set()).failures, []);
});

test('a file the tool could not parse fails the scan (it was not checked); a tolerable warning does not', () => {
  assert.deepEqual(judge([], [{ file: 'main/a.ts', message: 'Unexpected token', tolerable: false }], new Set()).failures, ['not scanned, the tool could not parse it: main/a.ts: Unexpected token']);
  assert.deepEqual(judge([], [{ file: 'main/a.ts', message: 'odd', tolerable: true }], new Set()).failures, []);
});

test('the explained LOW findings are the check ids in backticks under the "LOW findings" heading, and only there', () => {
  const doc = [
    '# Security',
    'Mentions `NOT_THIS_ONE` in passing.',
    '## The scan',
    '### LOW findings',
    '- `CSP_GLOBAL_CHECK`: why it stays.',
    '#### detail',
    '`ALSO_THIS_ONE`, and `lowercase` is not an id.',
    '### MEDIUM findings',
    '- `PRELOAD_JS_CHECK`',
    '## LOW findings again',
    '`SECOND_SECTION`',
  ].join('\n');
  assert.deepEqual([...explainedLowFindings(doc)].sort(), ['ALSO_THIS_ONE', 'CSP_GLOBAL_CHECK', 'SECOND_SECTION']);
});
