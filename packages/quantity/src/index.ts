/**
 * @packageDocumentation
 * Kubernetes resource quantities parsed, printed and valued as apimachinery's `resource.Quantity` does.
 */
export {
  canonicalQuantity,
  parseQuantity,
  quantityNumber,
  quantityString,
  quantityValue,
  QuantityError,
  QUANTITY_FORMAT_WRONG,
  type Quantity,
} from './quantity.js';
