/** Entry point of the workflow bundle: every workflow type the worker registers. */
export { cardPaymentWorkflow } from './payment';
