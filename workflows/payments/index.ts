/** The payments' workflow face: the payment machine another feature's workflow runs inline (orders). */
export { paymentMachine } from './machine';
