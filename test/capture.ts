export { captured } from './helpers/index.js';
