package dev.once;

import static dev.once.ExhaustiveVisitors.assertExhaustive;

import org.junit.jupiter.api.Test;

class VisitorsTest {

  @Test
  void everyAdmissionHasItsOwnVisitorMethodAndNoneHasADefault() {
    assertExhaustive(Admission.class, Admission.Visitor.class);
  }

  @Test
  void everyExecutionResultHasItsOwnVisitorMethodAndNoneHasADefault() {
    assertExhaustive(ExecutionResult.class, ExecutionResult.Visitor.class);
  }

  @Test
  void everyEventHasItsOwnVisitorMethodAndNoneHasADefault() {
    assertExhaustive(OnceEvent.class, OnceEvent.Visitor.class);
  }

  @Test
  void everyClaimResultHasItsOwnVisitorMethodAndNoneHasADefault() {
    assertExhaustive(dev.once.store.ClaimResult.class, dev.once.store.ClaimResult.Visitor.class);
  }
}
