/**
 * The annotations this provisioner writes on its PVs, read back by its deletion, its capacity budgets and node mode.
 *
 * @module
 */

/** PV annotation naming the node the volume was created on (`""` in shared mode). */
export const SELECTED_NODE_ANNOTATION = 'local.path.provisioner/selected-node';

/**
 * PV annotation naming the node whose node-mode provisioner made the volume; only that provisioner deletes it.
 */
export const PROVISIONED_ON_ANNOTATION = 'local.path.provisioner/provisioned-on';
