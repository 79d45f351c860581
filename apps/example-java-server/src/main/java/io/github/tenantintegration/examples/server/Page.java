package io.github.tenantintegration.examples.server;

/**
 * The app's one page. Every value it shows is escaped. The {@code data-testid}s are the ones the shared
 * Chromium test of every kit's example server reads ({@code tools/server-example-testing}).
 */
final class Page {
    private static final String STYLE =
            "body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}"
                    + "pre{background:#f4f4f4;padding:1rem}";

    private Page() {}

    /** The whole page: the login form when nobody is logged in ({@code user} null), else their account. */
    static String render(String user, ExampleServer.Shown shown) {
        return """
                <!doctype html>
                <html lang="en">
                <head><meta charset="utf-8"><title>Example Java server</title><style>%s</style></head>
                <body>
                <h1>Example Java server</h1>
                %s
                </body>
                </html>
                """.formatted(STYLE, user == null ? LOGIN_FORM : account(user, shown));
    }

    private static final String LOGIN_FORM = """
            <form method="post" action="/login">
              <p><label for="user">User name</label> <input id="user" name="user" data-testid="login-name" \
            pattern="[a-z0-9]{1,32}" required></p>
              <button type="submit" data-testid="login">Log in</button>
            </form>""";

    /** The logged-in user's part: their tenant account, or the button that connects it. */
    private static String account(String user, ExampleServer.Shown shown) {
        StringBuilder html = new StringBuilder();
        html.append("<p>Logged in to this app as <strong data-testid=\"app-user\">")
                .append(escape(user))
                .append("</strong>.</p>\n");
        if (shown.problem() != null) {
            html.append("<p data-testid=\"problem\">")
                    .append(escape(shown.problem()))
                    .append("</p>\n");
        }
        if (shown.connected()) {
            html.append("<p>Your tenant account:</p>\n<pre data-testid=\"tenant-user\">")
                    .append(escape(shown.tenantUser() == null ? "" : shown.tenantUser()))
                    .append("</pre>\n")
                    .append("<form method=\"post\" action=\"/disconnect\"><button type=\"submit\" "
                            + "data-testid=\"disconnect\">Disconnect your tenant account</button></form>\n");
        } else {
            html.append("<form method=\"post\" action=\"/connect\"><button type=\"submit\" data-testid=\"connect\">"
                    + "Connect your tenant account</button></form>\n");
        }
        html.append("<form method=\"post\" action=\"/logout\"><button type=\"submit\" data-testid=\"logout\">"
                + "Log out</button></form>");
        return html.toString();
    }

    /** The text escaped for HTML content and attribute values. */
    static String escape(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }
}
