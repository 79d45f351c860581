// The conformance orchestrator's entry point for tests and scripts.
export {
  ScenarioError,
  loadScenario,
  loadScenarios,
  expand,
  mixTargets,
  notRun,
  TARGETS,
  FEATURES,
  KNOWN_FAILURES,
  REDUCED_SUBSETS,
  SCENARIO_DIR,
} from "./scenarios.mjs";
export { openSuite, plan, survey, CLIENT_ID, REDIRECT_URI } from "./suite.mjs";
export { matrix, markdown } from "./report.mjs";
export { refreshesPerSession } from "./invariants.mjs";
export { protocolViolation, defaultCommands } from "./actor.mjs";
