package io.github.tenantintegration.tenanttest;

import io.github.tenantintegration.tokenmanager.TokenManager;
import java.net.http.HttpClient;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension: one sandbox per test class (started before the first test, stopped after the
 * last), and for each test a fresh {@link TestTenant}, signed in, on the sandbox's clock. Test methods
 * (and constructors) receive a {@link TestTenant}, a {@link Sandbox}, a {@link TokenManager} or an
 * {@link HttpClient} (the manager's bearer client) as parameters; within one test they belong together.
 *
 * <pre>{@code
 * @ExtendWith(TenantExtension.class)
 * class UserTest {
 *     @Test
 *     void readsTheUserAfterExpiry(TestTenant tenant) {
 *         tenant.advance(Duration.ofMinutes(16));
 *         assertEquals(200, tenant.get("/api/v1/auth/user").statusCode());
 *         assertEquals(1, tenant.refreshCount());
 *     }
 * }
 * }</pre>
 *
 * <p>Or registered with options: {@code @RegisterExtension static TenantExtension tenant =
 * TenantExtension.withSandbox(Sandbox.builder().args("--rotation-grace", "30")).manager(b -> b.refreshLeeway(Duration.ZERO));}
 */
public final class TenantExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(TenantExtension.class);

    private final Sandbox.Builder sandbox;
    private final UnaryOperator<TokenManager.Builder> manager;

    /** The extension with a default sandbox and manager ({@code @ExtendWith(TenantExtension.class)}). */
    public TenantExtension() {
        this(Sandbox.builder(), builder -> builder);
    }

    private TenantExtension(Sandbox.Builder sandbox, UnaryOperator<TokenManager.Builder> manager) {
        this.sandbox = sandbox;
        this.manager = manager;
    }

    /** The extension whose sandbox starts with these options. */
    public static TenantExtension withSandbox(Sandbox.Builder sandbox) {
        return new TenantExtension(sandbox, builder -> builder);
    }

    /** This extension whose managers are configured by {@code configure} (the clock stays the sandbox's). */
    public TenantExtension manager(UnaryOperator<TokenManager.Builder> configure) {
        return new TenantExtension(sandbox, configure);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getStore(NAMESPACE).put(Sandbox.class, sandbox.start());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        Sandbox started = context.getStore(NAMESPACE).remove(Sandbox.class, Sandbox.class);
        if (started != null) started.close();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == TestTenant.class
                || type == Sandbox.class
                || type == TokenManager.class
                || type == HttpClient.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        Sandbox started = sandboxOf(context);
        if (type == Sandbox.class) return started;
        // One tenant per test (the method's store), shared by its parameters.
        TestTenant tenant = context.getStore(NAMESPACE)
                .getOrComputeIfAbsent(
                        TestTenant.class,
                        key -> TestTenant.create(
                                started,
                                builder -> manager.apply(
                                                builder.scopes(io.github.tenantintegration.api.Scope.PROFILE_READ))
                                        .clock(started.clock()),
                                true),
                        TestTenant.class);
        if (type == TestTenant.class) return tenant;
        if (type == TokenManager.class) return tenant.manager();
        return tenant.client();
    }

    private static Sandbox sandboxOf(ExtensionContext context) {
        for (ExtensionContext at = context; at != null; at = at.getParent().orElse(null)) {
            Sandbox started = at.getStore(NAMESPACE).get(Sandbox.class, Sandbox.class);
            if (started != null) return started;
        }
        throw new ParameterResolutionException(
                "TenantExtension: no sandbox was started (register the extension on the class)");
    }
}
