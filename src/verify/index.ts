// Public surface of src/verify/: checking an arkivector answer against the chain (docs/verify.md). The
// package exports it (`import { verifyAnswer } from 'arkivector'`).
export { VERIFY_COMPLETE_MAX, VERIFY_COMPLETE_MAX_RAISED } from './limits.ts';
export { verifierRpc, type VerifierRpc } from './rpc.ts';
export { type AnswerKind, type Check, type Verdict, VerifyInputError, type VerifyReport } from './types.ts';
export { verifyAnswer, type VerifyOptions } from './verifyAnswer.ts';
