"""One function per user job: the click commands and the app's workers both call these, and only parse
arguments and present results. A workflow ties the layers below together (parse, store, compute) and
never prints or touches a widget."""
