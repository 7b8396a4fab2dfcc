export { InstancePage, InstanceView, toInstanceView, toNodeView, type NodeView } from './instance.view.js';
export { listInstances, registryHostOf } from './instances.js';
export { ListInstancesQuery } from './list-instances.query.js';
