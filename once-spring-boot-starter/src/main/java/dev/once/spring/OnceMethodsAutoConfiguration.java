package dev.once.spring;

import java.lang.reflect.Method;
import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * {@code @Idempotent(key = ...)} on any bean method: an advisor that Spring's auto-proxy creator
 * applies, as it applies {@code @Transactional}'s, so no AspectJ is needed. It runs in every kind
 * of application (a Kafka consumer has no web server), over the engine {@link
 * OnceAutoConfiguration} built.
 */
@AutoConfiguration(
    after = OnceAutoConfiguration.class,
    afterName = {
      // Boot 3's name, then Boot 4's, as in OnceAutoConfiguration.
      "org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration",
      "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
      "org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration"
    })
@OnceAutoConfiguration.ConditionalOnOnceEnabled
public class OnceMethodsAutoConfiguration {

  /**
   * Outside every other advisor of the default order ({@code @Transactional}'s, for one): the key
   * is claimed before a transaction begins and recorded after it committed, so a failed commit is a
   * transient failure that releases the key.
   */
  static final int ORDER = Ordered.LOWEST_PRECEDENCE - 100;

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static IdempotentMethods onceIdempotentMethods(
      ListableBeanFactory beans, Environment environment) {
    return new IdempotentMethods(beans, environment);
  }

  /** A method the advisor could never reach stops startup instead of running unguarded. */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static UnreachableMethods onceUnreachableMethods() {
    return new UnreachableMethods();
  }

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static AbstractPointcutAdvisor onceIdempotentMethodAdvisor(IdempotentMethods methods) {
    Pointcut pointcut =
        new StaticMethodMatcherPointcut() {
          @Override
          public boolean matches(Method method, Class<?> targetClass) {
            return methods.plan(method, targetClass) != null;
          }
        };
    AbstractPointcutAdvisor advisor =
        new AbstractPointcutAdvisor() {
          @Override
          public Pointcut getPointcut() {
            return pointcut;
          }

          @Override
          public Advice getAdvice() {
            return methods;
          }
        };
    advisor.setOrder(ORDER);
    return advisor;
  }
}
