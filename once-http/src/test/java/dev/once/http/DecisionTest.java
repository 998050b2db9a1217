package dev.once.http;

import static dev.once.ExhaustiveVisitors.assertExhaustive;

import org.junit.jupiter.api.Test;

class DecisionTest {

  @Test
  void everyDecisionHasItsOwnVisitorMethodAndNoneHasADefault() {
    assertExhaustive(Decision.class, Decision.Visitor.class);
  }
}
